// The curl project's container image (curlimages/curl, built from curl/curl-container): Alpine
// with busybox sh, grep, sed and curl, running as the non-root user curl_user. The tag is the one
// the Grafana chart of the stack's kube-prometheus-stack pins for its own curl containers
// (grafana 12.10.3 values.yaml: image curlimages/curl, tag 8.21.0; /work/shared/reference/charts),
// so the stop job adds no image the cluster does not already trust. Read, not run here: the
// image's contents (busybox tools, the user) rest on the curl-container Dockerfile.
export const CURL_IMAGE = { repository: "curlimages/curl", tag: "8.21.0" } as const;
/** uid/gid of curl_user in the image (Alpine `adduser -S`/`addgroup -S`): the job runs as it. */
export const CURL_UID = 100;
export const CURL_GID = 101;

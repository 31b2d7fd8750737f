// Pulumi type tokens the rules (and their tests) look for: spelled once here, as the engine
// records them (<package>:<module>:<Type>).
export const STATEFUL_SET = "kubernetes:apps/v1:StatefulSet";
export const SERVICE = "kubernetes:core/v1:Service";
export const CONFIG_MAP = "kubernetes:core/v1:ConfigMap";
export const SERVICE_MONITOR = "kubernetes:monitoring.coreos.com/v1:ServiceMonitor";
export const PROMETHEUS_RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule";
export const HELM_RELEASE = "kubernetes:helm.sh/v3:Release";
export const POD_DISRUPTION_BUDGET = "kubernetes:policy/v1:PodDisruptionBudget";
export const HORIZONTAL_POD_AUTOSCALER = "kubernetes:autoscaling/v2:HorizontalPodAutoscaler";
export const NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy";
export const NODE_GROUP = "aws:eks/nodeGroup:NodeGroup";
export const LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate";
export const BUCKET = "aws:s3/bucket:Bucket";
export const BUCKET_ENCRYPTION = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration";
export const BUCKET_VERSIONING = "aws:s3/bucketVersioning:BucketVersioning";
export const BUCKET_PUBLIC_ACCESS_BLOCK = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock";
export const BUCKET_POLICY = "aws:s3/bucketPolicy:BucketPolicy";
export const SECURITY_GROUP_INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule";
export const SECURITY_GROUP_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule";
export const SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup";

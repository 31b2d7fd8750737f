// IAM and bucket policy documents of the model repository: pure functions of plain
// strings that return JSON-serialisable objects, so tests and the policy pack can read
// them without the Pulumi runtime.
import { IAM_POLICY_VERSION, STS_AUDIENCE, issuerHostPath, serviceAccountSubject } from "../upstream/aws-iam";

/** Region part of a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>). */
export function kmsKeyRegion(arn: string): string | undefined {
  return arn.split(":")[3] || undefined;
}

export interface PolicyStatement {
  Sid?: string;
  Effect: "Allow" | "Deny";
  Principal?: "*" | Record<string, string | string[]>;
  Action: string | string[];
  Resource?: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}

export interface PolicyDocument {
  Version: typeof IAM_POLICY_VERSION;
  Statement: PolicyStatement[];
}

/** Object ARN pattern of a prefix: arn:aws:s3:::bucket/prefix/* (the prefix alone, never the bucket). */
export function prefixObjectsArn(bucketArn: string, prefix: string): string {
  return `${bucketArn}/${prefix}/*`;
}

/** ListBucket condition that limits listing to the prefix (Triton lists `<prefix>/` to find models). */
function listPrefixCondition(prefix: string): PolicyStatement["Condition"] {
  return { StringLike: { "s3:prefix": [prefix, `${prefix}/*`] } };
}

/** kms:ViaService: the key is usable by this role only through S3 in the bucket's region, not directly. */
function viaS3(region: string): PolicyStatement["Condition"] {
  return { StringEquals: { "kms:ViaService": `s3.${region}.amazonaws.com` } };
}

/**
 * Trust policy of an IRSA role: only the cluster's OIDC provider, only tokens minted for
 * exactly one ServiceAccount (StringEquals, not StringLike: no wildcard namespaces or names),
 * only with the STS audience.
 */
export function irsaTrustPolicy(args: { providerArn: string; issuerUrl: string; namespace: string; serviceAccount: string }): PolicyDocument {
  const host = issuerHostPath(args.issuerUrl);
  return {
    Version: IAM_POLICY_VERSION,
    Statement: [
      {
        Sid: "TritonServiceAccountOnly",
        Effect: "Allow",
        Principal: { Federated: args.providerArn },
        Action: "sts:AssumeRoleWithWebIdentity",
        Condition: {
          StringEquals: {
            [`${host}:sub`]: serviceAccountSubject(args.namespace, args.serviceAccount),
            [`${host}:aud`]: STS_AUDIENCE,
          },
        },
      },
    ],
  };
}

export interface BucketAccess {
  /** arn:<partition>:s3:::<bucket> */
  readonly bucketArn: string;
  /** Model prefix inside the bucket, without leading or trailing '/'. */
  readonly prefix: string;
  /** The key the bucket encrypts with (SSE-KMS). */
  readonly kmsKeyArn: string;
  /** Region of the bucket (and of the key). */
  readonly region: string;
}

/** Read-only access for Triton: list the prefix, get its objects, decrypt through S3. Nothing else, nowhere else. */
export function modelReadPolicy(a: BucketAccess): PolicyDocument {
  return {
    Version: IAM_POLICY_VERSION,
    Statement: [
      { Sid: "ListModelPrefix", Effect: "Allow", Action: "s3:ListBucket", Resource: a.bucketArn, Condition: listPrefixCondition(a.prefix) },
      { Sid: "ReadModels", Effect: "Allow", Action: "s3:GetObject", Resource: prefixObjectsArn(a.bucketArn, a.prefix) },
      { Sid: "DecryptModels", Effect: "Allow", Action: "kms:Decrypt", Resource: a.kmsKeyArn, Condition: viaS3(a.region) },
    ],
  };
}

/**
 * Write access for the CI that publishes models: the same prefix, plus put/delete and the
 * data key SSE-KMS needs for uploads. Never the bucket's configuration, never other prefixes.
 */
export function modelPublishPolicy(a: BucketAccess): PolicyDocument {
  return {
    Version: IAM_POLICY_VERSION,
    Statement: [
      { Sid: "ListModelPrefix", Effect: "Allow", Action: "s3:ListBucket", Resource: a.bucketArn, Condition: listPrefixCondition(a.prefix) },
      {
        Sid: "WriteModels",
        Effect: "Allow",
        Action: ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
        Resource: prefixObjectsArn(a.bucketArn, a.prefix),
      },
      { Sid: "EncryptModels", Effect: "Allow", Action: ["kms:GenerateDataKey", "kms:Decrypt"], Resource: a.kmsKeyArn, Condition: viaS3(a.region) },
    ],
  };
}

/** Who may assume the publisher role: the given principals (e.g. the CI's role). */
export function publisherTrustPolicy(principalArns: string[]): PolicyDocument {
  return {
    Version: IAM_POLICY_VERSION,
    Statement: [{ Sid: "ModelPublishers", Effect: "Allow", Principal: { AWS: principalArns }, Action: "sts:AssumeRole" }],
  };
}

/**
 * Bucket policy: refuse every request that is not TLS (aws:SecureTransport false) or uses
 * TLS older than 1.2, whoever makes it. Deny statements cannot grant anything, so this
 * policy does not make the bucket public.
 */
export function tlsOnlyBucketPolicy(bucketArn: string): PolicyDocument {
  const resources = [bucketArn, `${bucketArn}/*`];
  return {
    Version: IAM_POLICY_VERSION,
    Statement: [
      {
        Sid: "DenyInsecureTransport",
        Effect: "Deny",
        Principal: "*",
        Action: "s3:*",
        Resource: resources,
        Condition: { Bool: { "aws:SecureTransport": "false" } },
      },
      {
        Sid: "DenyOutdatedTls",
        Effect: "Deny",
        Principal: "*",
        Action: "s3:*",
        Resource: resources,
        Condition: { NumericLessThan: { "s3:TlsVersion": "1.2" } },
      },
    ],
  };
}

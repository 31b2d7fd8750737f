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
export const DEPLOYMENT = "kubernetes:apps/v1:Deployment";
export const DAEMON_SET = "kubernetes:apps/v1:DaemonSet";
export const IAM_ROLE = "aws:iam/role:Role";
export const IAM_ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy";
export const IAM_POLICY = "aws:iam/policy:Policy";
export const IAM_USER_POLICY = "aws:iam/userPolicy:UserPolicy";
export const IAM_GROUP_POLICY = "aws:iam/groupPolicy:GroupPolicy";
export const IAM_ROLE_POLICY_ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment";
export const AWS_PROVIDER = "pulumi:providers:aws";
export const BUCKET_OWNERSHIP_CONTROLS = "aws:s3/bucketOwnershipControls:BucketOwnershipControls";
export const BUCKET_LIFECYCLE = "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration";
export const BUCKET_LOGGING = "aws:s3/bucketLogging:BucketLogging";
export const EFS_FILE_SYSTEM = "aws:efs/fileSystem:FileSystem";
export const EFS_ACCESS_POINT = "aws:efs/accessPoint:AccessPoint";
export const EFS_MOUNT_TARGET = "aws:efs/mountTarget:MountTarget";
/** The serving group component (components/triton): a rule's configKey names its group by this component's name. */
export const TRITON_SERVER = "triton-platform:triton:TritonServer";

// Quiet, deterministic test processes: request logs off unless a test turns them on, and no
// AWS SDK banner about the Node version on every client.
process.env.LOG_LEVEL ??= 'SILENT';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
// The SDK clients tests build (harnesses, fixtures, the stacks they spawn) wait as long as a loaded
// machine needs: the production budgets (1 s to connect, 1.5 s per DynamoDB call) are for a Lambda
// beside DynamoDB, not for a DynamoDB Local sharing two cores with other test files, where a call
// that times out turned into a 503 and a failed test. Tests of the budgets themselves pass their own
// (aws-clients.test.ts); the fault tests give their instances theirs (local-stack-instances.test.ts).
process.env.AWS_CONNECT_TIMEOUT_MS ??= '10000';
process.env.AWS_DYNAMODB_TIMEOUT_MS ??= '20000';
process.env.AWS_S3_TIMEOUT_MS ??= '30000';

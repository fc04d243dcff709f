// Quiet, deterministic test processes: request logs off unless a test turns them on, and no
// AWS SDK banner about the Node version on every client.
process.env.LOG_LEVEL ??= 'SILENT';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
// The SDK budgets of every client a test builds are set once, by global-setup.ts (workers inherit them).

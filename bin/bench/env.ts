// Imported first by the benchmark entry points: request logs off and no SDK banner, before any
// module that reads them is loaded.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.LOG_LEVEL = 'SILENT';

/**
 * The SDK's JSON Schema validator (Ajv with its formats), on its own: never imported statically.
 * `lazyValidator` (server.ts) requires it by a computed specifier the first time a schema is asked
 * for, which the MCP servers here never do (the SDK's server validates elicitation answers with it),
 * and CDK bundles it as `ajv-validator.js` beside the function's `index.js` (lib/lambda-function.ts,
 * `AJV_CHUNK`): Ajv (about 135 KB) stays out of the function's bundle and module init.
 */
export { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';

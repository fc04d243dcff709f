/**
 * Stands in for `ajv` and `ajv-formats` in the bundles of the functions that serve MCP with
 * `createToolServer` (lib/lambda-function.ts, `AJV_ABSENT`): the SDK's server module imports Ajv
 * for its default validator, which it builds only when it is given none, and these servers are
 * always given `lazyValidator`, whose Ajv is in `ajv-validator.js`. Reaching this is a wiring bug.
 */
export default function ajvAbsent(): never {
  throw new Error('Ajv is not in this bundle: MCP servers here take lazyValidator (lambdas/shared/mcp/server.ts), which loads ajv-validator.js');
}

// Validates an OpenAPI document read from stdin with @seriousme/openapi-schema-validator
// (ESM-only, so it runs in its own Node process rather than under ts-jest's CommonJS).
import { Validator } from '@seriousme/openapi-schema-validator';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const validator = new Validator();
const result = await validator.validate(JSON.parse(input));
process.stdout.write(JSON.stringify({ valid: result.valid, version: validator.version, errors: result.errors ?? [] }));

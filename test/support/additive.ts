/**
 * The contract guard's direction-aware rules live in `lambdas/shared/schema-compat.ts`: the catalog's
 * tool changelog judges a server's tool schemas by the same rules (a breaking change is what this
 * guard refuses of a request).
 */
export { nonAdditiveChanges } from '../../lambdas/shared/schema-compat';

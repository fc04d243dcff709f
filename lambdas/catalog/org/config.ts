/** The group whose members may read and replace the allow-list (a Cognito user pool group; `ORG_ADMIN_GROUP`). Read by CDK too. */
export const DEFAULT_ADMIN_GROUP = 'catalog-admins';

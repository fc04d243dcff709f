import * as path from 'node:path';
import { Duration } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { OAUTH_ROUTES, OAUTH_WELL_KNOWN_ROUTES } from '../lambdas/oauth/routes';
import type { ApiTable } from '../lambdas/shared/http/route-table';
import type { Identity } from './identity';
import { grantTable } from './tables';
import { addAnyRoutes, addRoutesFromTable, type TableRoutes } from './http-routes';
import { appFunction, type FunctionLogLevel } from './lambda-function';
import { acknowledge } from './nag';

export interface OAuthFrontProps {
  /** The user pool (identity provider), the token and client tables, and the deployment's public URL. */
  readonly auth: Identity;
  /** The HTTP API the routes go on (the one CloudFront sends `/oauth/*` and `/.well-known/*` to). */
  readonly httpApi: apigwv2.IHttpApi;
  /**
   * Key ring (the cursor keys' JSON) from which the front derives the HMAC keys of its signed,
   * short-lived form values (CURSOR_SECRET_ARN); a label of its own keeps them apart from cursors.
   */
  readonly signingKeysSecret: secretsmanager.ISecret;
  /**
   * The Lambda's entry file; it must export `handler`.
   * @default lambdas/oauth/handler.ts
   */
  readonly entry?: string;
  /** @default 512 */
  readonly memorySize?: number;
  /** @default Duration.seconds(10) */
  readonly timeout?: Duration;
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** @default 'INFO' */
  readonly logLevel?: FunctionLogLevel;
  /** Lifetime of access tokens (OAUTH_ACCESS_TOKEN_TTL_SECONDS). @default Duration.hours(1) */
  readonly accessTokenTtl?: Duration;
  /** Lifetime of refresh tokens, renewed by each rotation (OAUTH_REFRESH_TOKEN_TTL_SECONDS). @default Duration.days(30) */
  readonly refreshTokenTtl?: Duration;
  /** Lifetime of authorization codes (OAUTH_CODE_TTL_SECONDS). @default Duration.seconds(60) */
  readonly codeTtl?: Duration;
  /** How long a registered client that never signs anyone in is kept (OAUTH_UNUSED_CLIENT_TTL_SECONDS). @default Duration.days(1) */
  readonly unusedClientTtl?: Duration;
  /** How long a registered client is kept after its last token grant, at least `refreshTokenTtl` (OAUTH_IDLE_CLIENT_TTL_SECONDS). @default Duration.days(90) */
  readonly idleClientTtl?: Duration;
  /** The shared rate-limit table (GCRA buckets) that limits registrations and token requests per client IP. */
  readonly rateLimitTable: dynamodb.ITable;
  /** CloudFront's origin header secret: with it the viewer address (not CloudFront's) is the client IP. */
  readonly originVerifySecret: secretsmanager.ISecret;
  /** Registrations per minute per client IP (OAUTH_REGISTER_RATE_PER_MINUTE). @default 10 */
  readonly registerRatePerMinute?: number;
  /** Token and revocation requests per minute per client IP (OAUTH_TOKEN_RATE_PER_MINUTE). @default 60 */
  readonly tokenRatePerMinute?: number;
  /** Reserved concurrency of the front's function. @default - unreserved; `CatalogStack` reserves 20 */
  readonly reservedConcurrentExecutions?: number;
}

/** The front's settings a deployment may change (`CatalogStackProps.oauth`): lifetimes, rate limits, sizing. */
export type OAuthFrontSettings = Omit<OAuthFrontProps, 'auth' | 'httpApi' | 'signingKeysSecret' | 'rateLimitTable' | 'originVerifySecret'>;

const DEFAULT_ENTRY = path.join(__dirname, '..', 'lambdas', 'oauth', 'handler.ts');

/** The front's two route prefixes as one table for API Gateway (it has no prefix mounts, only route keys). */
export const OAUTH_FRONT_TABLE: ApiTable = { catchAllFn: 'oauth', prefix: '', routes: [...OAUTH_WELL_KNOWN_ROUTES, ...OAUTH_ROUTES] };

/** Greedy routes that send everything else under the front's prefixes to it: 404/405 in OAuth JSON, CORS preflights. */
export const OAUTH_PROXY_PATHS = ['/oauth/{proxy+}', '/.well-known/{proxy+}'];

/**
 * The OAuth 2.1 authorization server MCP clients use (RFC 8414 / 9728 metadata, RFC 7591
 * registration, Client ID Metadata Documents, PKCE, token rotation, RFC 7009 revocation): one
 * Lambda (Node.js 24, arm64) on the HTTP API, with its routes from the route table. Users sign in
 * on Cognito's hosted pages through an app client of the front's own; the front then issues the
 * opaque tokens the MCP endpoint, `/v1` and favorites verify against the token table.
 */
export class OAuthFront extends Construct {
  readonly fn: NodejsFunction;
  readonly role: iam.Role;
  /** The front's app client at the user pool: public, authorization code + PKCE, `openid` only. */
  readonly cognitoClient: cognito.UserPoolClient;
  readonly routes: TableRoutes;
  /** `ANY /oauth/{proxy+}`, `ANY /.well-known/{proxy+}`. */
  readonly proxyRoutes: apigwv2.HttpRoute[];

  constructor(scope: Construct, id: string, props: OAuthFrontProps) {
    super(scope, id);
    const { auth } = props;

    this.cognitoClient = new cognito.UserPoolClient(this, 'CognitoClient', {
      userPool: auth.userPool,
      userPoolClientName: 'oauth-front',
      // The front runs server-side but needs no secret: PKCE binds Cognito's code to its request.
      generateSecret: false,
      oAuth: {
        flows: { authorizationCodeGrant: true, implicitCodeGrant: false, clientCredentials: false },
        scopes: [cognito.OAuthScope.OPENID],
        callbackUrls: [`${auth.publicUrl}/oauth/callback`],
      },
      supportedIdentityProviders: [cognito.UserPoolClientIdentityProvider.COGNITO],
      preventUserExistenceErrors: true,
      enableTokenRevocation: true,
      // Only the ID token's `sub` is used, once, right after sign-in.
      idTokenValidity: Duration.minutes(5),
      accessTokenValidity: Duration.minutes(5),
      refreshTokenValidity: Duration.minutes(60),
    });

    const seconds = (d: Duration | undefined, fallback: number) => String(d ? d.toSeconds() : fallback);
    ({ fn: this.fn, role: this.role } = appFunction(this, 'Function', {
      description: 'OAuth 2.1 front for MCP clients (/oauth/*, /.well-known/oauth-*)',
      roleDescription: 'OAuth front: registers clients, issues, rotates and revokes opaque tokens',
      entry: props.entry ?? DEFAULT_ENTRY,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(10),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      logRetention: props.logRetention,
      logLevel: props.logLevel,
      serviceName: 'oauth',
      environment: {
        ...auth.verifierEnvironment(),
        COGNITO_DOMAIN: auth.signInDomain.baseUrl(),
        OAUTH_COGNITO_CLIENT_ID: this.cognitoClient.userPoolClientId,
        CURSOR_SECRET_ARN: props.signingKeysSecret.secretArn,
        OAUTH_ACCESS_TOKEN_TTL_SECONDS: seconds(props.accessTokenTtl, 3600),
        OAUTH_REFRESH_TOKEN_TTL_SECONDS: seconds(props.refreshTokenTtl, 30 * 24 * 3600),
        OAUTH_CODE_TTL_SECONDS: seconds(props.codeTtl, 60),
        OAUTH_UNUSED_CLIENT_TTL_SECONDS: seconds(props.unusedClientTtl, 24 * 3600),
        OAUTH_IDLE_CLIENT_TTL_SECONDS: seconds(props.idleClientTtl, 90 * 24 * 3600),
        OAUTH_REGISTER_RATE_PER_MINUTE: String(props.registerRatePerMinute ?? 10),
        OAUTH_TOKEN_RATE_PER_MINUTE: String(props.tokenRatePerMinute ?? 60),
        RATE_LIMIT_TABLE: props.rateLimitTable.tableName,
        ORIGIN_VERIFY_SECRET_ARN: props.originVerifySecret.secretArn,
      },
    }));

    // Least privilege. Tokens: the strongly consistent reads of a credential and its family, the
    // transactional puts and conditional updates of issue, redeem, rotate and revoke. Clients: one
    // read per lookup, one put per registration or refreshed metadata document.
    grantTable(auth.tokenTable, this.role, ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    grantTable(auth.clientTable, this.role, ['dynamodb:GetItem', 'dynamodb:PutItem']);
    props.signingKeysSecret.grantRead(this.role);
    props.originVerifySecret.grantRead(this.role);
    grantTable(props.rateLimitTable, this.role, ['dynamodb:UpdateItem']);

    this.routes = addRoutesFromTable(props.httpApi, OAUTH_FRONT_TABLE, { oauth: this.fn }, { catchAll: false });
    this.proxyRoutes = addAnyRoutes(this, props.httpApi, OAUTH_PROXY_PATHS, this.fn, { route: 'ProxyRoute', integration: 'OAuthProxyIntegration' });
    const reason =
      'The OAuth front is the authorization server itself: its endpoints are public by design (RFC 8414, 9728, 7591, 6749, 7009), clients authenticate with PKCE and the code or refresh token they present, and the pages protect themselves with signed, cookie-bound form values; there is no bearer token an authorizer could check.';
    for (const route of this.routes.routes.values()) acknowledge(route, 'AwsSolutions-APIG4', reason);
    for (const route of this.proxyRoutes) acknowledge(route, 'AwsSolutions-APIG4', reason);
  }
}

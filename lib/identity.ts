import { Aws, Duration, Fn, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { MEMORY_SCOPES } from '../lambdas/identity/principal';
import { acknowledge } from './nag';
import { FAVORITES_TABLE } from '../lambdas/catalog/favorites/tables';
import type { PersonalTokenLimits } from '../lambdas/identity/config';
import { CLIENT_TABLE, PERSONAL_TOKEN_KEYS, TOKEN_TABLE } from '../lambdas/identity/tables';
import { grantTable, tableKeys } from './tables';

export interface IdentityProps {
  /**
   * The deployment's public base URL, without a trailing slash (PUBLIC_URL), e.g.
   * `https://mcp.example.com`. The audience of every token this deployment accepts is
   * `<publicUrl>/mcp` (one audience per deployment, DECISIONS), which is also the identifier of the
   * Cognito resource server. May be a deploy-time token (the CloudFront domain name).
   */
  readonly publicUrl: string;
  /**
   * What happens to the tables and the user pool when they leave the stack. With RETAIN they also
   * get deletion protection.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Customer-managed KMS key for the tables.
   * @default - AWS-managed encryption (DynamoDB `AWS_MANAGED`)
   */
  readonly encryptionKey?: kms.IKey;
  /**
   * Whether anyone may create an account from the hosted sign-in page. Off: accounts are created
   * by an administrator (console, `aws cognito-idp admin-create-user`) or an identity provider.
   * @default false
   */
  readonly selfSignUp?: boolean;
  /**
   * Prefix of the hosted sign-in domain, `https://<prefix>.auth.<region>.amazoncognito.com`
   * (lower-case letters, digits, hyphens; unique in the region; may not contain `aws`, `amazon`
   * or `cognito`).
   * @default - `mcp-` followed by the stack's id (a UUID), unique without configuration
   */
  readonly signInDomainPrefix?: string;
  /**
   * Cognito feature plan. ESSENTIALS has no charge for the first 10,000 monthly active users and
   * covers everything this product uses. PLUS (billed per monthly active user from the first one)
   * turns on threat protection (compromised-credential and adaptive sign-in checks) in enforcing
   * mode: the documented hardening (README, "Deployment").
   * @default cognito.FeaturePlan.ESSENTIALS
   */
  readonly featurePlan?: cognito.FeaturePlan;
  /**
   * Who sends Cognito's emails (invitations, verification codes, password resets). Cognito's own
   * sender allows 50 emails a day, enough for a trial only; with SES, the verified identity
   * `fromEmail` (or its domain `sesVerifiedDomain`) in `sesRegion` sends them.
   * @default - Cognito's default sender (no-reply@verificationemail.com, 50 a day)
   */
  readonly email?: CognitoEmailSettings;
  /**
   * Multi-factor authentication (TOTP authenticator apps; no SMS).
   * @default cognito.Mfa.OPTIONAL
   */
  readonly mfa?: cognito.Mfa;
  /**
   * Where the hosted sign-in may send the web front back after sign-in (authorization code).
   * @default - [`<publicUrl>/auth/callback`]
   */
  readonly webCallbackUrls?: string[];
  /**
   * Where the hosted sign-in may send the web front after sign-out.
   * @default - [`<publicUrl>/`]
   */
  readonly webLogoutUrls?: string[];
  /**
   * Personal access tokens (`/v1/tokens`): the lifetime when none is asked (`defaultDays`), the
   * longest (`maxDays`), active tokens per user (`maxPerUser`), and how often a use is recorded
   * (`lastUsedSeconds`). Set as AUTH_PAT_* of every verifier.
   * @default { defaultDays: 90, maxDays: 366, maxPerUser: 50, lastUsedSeconds: 3600 }
   */
  readonly personalTokens?: Partial<PersonalTokenLimits>;
}

/** Cognito's email through Amazon SES (the identity must be verified in SES first, out of production sandbox for real users). */
export interface CognitoEmailSettings {
  /** e.g. `no-reply@mcp.example.com`. */
  readonly fromEmail: string;
  /** e.g. `MCP catalog`. @default - none */
  readonly fromName?: string;
  /** @default - none */
  readonly replyTo?: string;
  /** The SES region (one where Cognito may send from). @default - the stack's region */
  readonly sesRegion?: string;
  /** The verified domain, when the identity verified is the domain rather than the address. @default - the address itself */
  readonly sesVerifiedDomain?: string;
  /** An SES configuration set (event publishing, dedicated IPs). @default - none */
  readonly configurationSetName?: string;
}

/** DynamoDB actions a token verifier needs on the token table (one token read, its family in a batch). */
const TOKEN_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem'];
/** What `DynamoFavoritesStore` does: a query per list, transactions of put/update/delete with conditions. */
const FAVORITES_ACTIONS = [
  'dynamodb:Query',
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:ConditionCheckItem',
];

/**
 * Sign-in and the auth context's data: the Cognito user pool (hosted sign-in, the resource server
 * with the `memory:read` / `memory:write` scopes, the web front's app client), and the tables of
 * opaque tokens, OAuth clients and favorites (keys as in `lambdas/identity/tables.ts`).
 *
 * Cognito is the identity provider; its access tokens are verified in the functions with
 * aws-jwt-verify (issuer, `token_use`, client id, expiry, signature). The OAuth front that issues
 * opaque tokens to MCP clients keeps its own clients in the client table, not as app clients.
 */
export class Identity extends Construct {
  /** `<publicUrl>/mcp`: the one audience of this deployment (AUTH_AUDIENCE). */
  readonly audience: string;
  readonly publicUrl: string;
  /** Opaque access and refresh tokens, codes, grant families: partition key `pk`, TTL `expiresAt`. */
  readonly tokenTable: dynamodb.Table;
  /** OAuth clients of the front: partition key `clientId`, TTL `expiresAt`. */
  readonly clientTable: dynamodb.Table;
  /** Favorites: partition key `pk` (the user), sort key `sk`. */
  readonly favoritesTable: dynamodb.Table;
  readonly userPool: cognito.UserPool;
  readonly signInDomain: cognito.UserPoolDomain;
  /** Identifier = `audience`; scopes arrive in access tokens as `<audience>/memory:read`. */
  readonly resourceServer: cognito.UserPoolResourceServer;
  /** The web front: public client, authorization code with PKCE, no secret. */
  readonly webClient: cognito.UserPoolClient;
  private readonly personalTokens: Partial<PersonalTokenLimits>;

  constructor(scope: Construct, id: string, props: IdentityProps) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const retained = removalPolicy === RemovalPolicy.RETAIN;
    this.publicUrl = props.publicUrl;
    this.audience = `${props.publicUrl}/mcp`;
    this.personalTokens = props.personalTokens ?? {};

    const tableEncryption = props.encryptionKey
      ? { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey: props.encryptionKey }
      : { encryption: dynamodb.TableEncryption.AWS_MANAGED };
    const common = {
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      ...tableEncryption,
      deletionProtection: retained,
      removalPolicy,
    };
    this.tokenTable = new dynamodb.Table(this, 'TokenTable', {
      ...tableKeys(TOKEN_TABLE),
      ...common,
    });
    this.clientTable = new dynamodb.Table(this, 'ClientTable', {
      ...tableKeys(CLIENT_TABLE),
      ...common,
    });
    this.favoritesTable = new dynamodb.Table(this, 'FavoritesTable', {
      ...tableKeys(FAVORITES_TABLE),
      ...common,
    });

    const featurePlan = props.featurePlan ?? cognito.FeaturePlan.ESSENTIALS;
    const mfa = props.mfa ?? cognito.Mfa.OPTIONAL;
    this.userPool = new cognito.UserPool(this, 'UserPool', {
      selfSignUpEnabled: props.selfSignUp ?? false,
      signInAliases: { email: true },
      autoVerify: { email: true },
      standardAttributes: { email: { required: true, mutable: true } },
      signInCaseSensitive: false,
      accountRecovery: cognito.AccountRecovery.EMAIL_ONLY,
      passwordPolicy: {
        minLength: 12,
        requireLowercase: true,
        requireUppercase: true,
        requireDigits: true,
        requireSymbols: true,
        tempPasswordValidity: Duration.days(3),
        ...(featurePlan !== cognito.FeaturePlan.LITE && { passwordHistorySize: 5 }),
      },
      mfa,
      ...(mfa !== cognito.Mfa.OFF && { mfaSecondFactor: { otp: true, sms: false } }),
      featurePlan,
      ...(featurePlan === cognito.FeaturePlan.PLUS && { standardThreatProtectionMode: cognito.StandardThreatProtectionMode.FULL_FUNCTION }),
      ...(props.email && {
        email: cognito.UserPoolEmail.withSES({
          fromEmail: props.email.fromEmail,
          fromName: props.email.fromName,
          replyTo: props.email.replyTo,
          sesRegion: props.email.sesRegion ?? Stack.of(this).region,
          sesVerifiedDomain: props.email.sesVerifiedDomain,
          configurationSetName: props.email.configurationSetName,
        }),
      }),
      deletionProtection: retained,
      removalPolicy,
    });
    if (featurePlan !== cognito.FeaturePlan.PLUS) {
      acknowledge(
        this.userPool,
        'AwsSolutions-COG8',
        `The ${featurePlan} feature plan: no charge for the first 10,000 monthly active users, where PLUS bills every one; accounts only hold favorites and their own memories, passwords are 12+ characters of every class, and TOTP MFA is offered. PLUS with threat protection enforced is the documented hardening (featurePlan prop).`,
      );
    }
    if (mfa !== cognito.Mfa.REQUIRED) {
      acknowledge(
        this.userPool,
        'AwsSolutions-COG2',
        "Accounts only pin catalog favorites and hold the user's own memories; MFA (TOTP) is offered to every user rather than forced at sign-up, and mfa: REQUIRED enforces it (with the PLUS plan, threat protection also blocks risky and compromised-credential sign-ins).",
      );
    }

    this.signInDomain = this.userPool.addDomain('SignInDomain', {
      cognitoDomain: {
        // The stack id's UUID: unique per stack without configuration (the prefix is global per region).
        domainPrefix: props.signInDomainPrefix ?? Fn.join('-', ['mcp', Fn.select(2, Fn.split('/', Aws.STACK_ID))]),
      },
    });

    const scopes = MEMORY_SCOPES.map(
      (scopeName) =>
        new cognito.ResourceServerScope({ scopeName, scopeDescription: scopeName === 'memory:read' ? 'Read your memories' : 'Write your memories' }),
    );
    this.resourceServer = this.userPool.addResourceServer('ResourceServer', {
      identifier: this.audience,
      userPoolResourceServerName: 'mcp-memory',
      scopes,
    });

    this.webClient = this.userPool.addClient('WebClient', {
      userPoolClientName: 'web',
      // A browser app holds no secret; it uses the authorization code flow with PKCE (S256).
      generateSecret: false,
      authFlows: { userSrp: true },
      oAuth: {
        flows: { authorizationCodeGrant: true, implicitCodeGrant: false, clientCredentials: false },
        scopes: [
          cognito.OAuthScope.OPENID,
          cognito.OAuthScope.EMAIL,
          cognito.OAuthScope.PROFILE,
          ...scopes.map((s) => cognito.OAuthScope.resourceServer(this.resourceServer, s)),
        ],
        callbackUrls: props.webCallbackUrls ?? [`${props.publicUrl}/auth/callback`],
        logoutUrls: props.webLogoutUrls ?? [`${props.publicUrl}/`],
      },
      supportedIdentityProviders: [cognito.UserPoolClientIdentityProvider.COGNITO],
      preventUserExistenceErrors: true,
      enableTokenRevocation: true,
      accessTokenValidity: Duration.hours(1),
      idTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.days(30),
    });
  }

  /**
   * What `loadAuthConfig()` reads (lambdas/identity/config.ts): Cognito JWTs of the web client, the
   * deployment's audience, and the opaque-token and client tables.
   */
  verifierEnvironment(): Record<string, string> {
    return {
      AUTH_MODE: 'cognito',
      COGNITO_USER_POOL_ID: this.userPool.userPoolId,
      COGNITO_CLIENT_IDS: this.webClient.userPoolClientId,
      COGNITO_RESOURCE_SERVER: this.audience,
      AUTH_AUDIENCE: this.audience,
      PUBLIC_URL: this.publicUrl,
      AUTH_TOKEN_TABLE: this.tokenTable.tableName,
      AUTH_CLIENT_TABLE: this.clientTable.tableName,
      ...personalTokenEnvironment(this.personalTokens),
    };
  }

  /** Token verification: reads of the opaque-token table (the token and its grant family). */
  grantTokenVerification(grantee: iam.IGrantable): void {
    grantTable(this.tokenTable, grantee, TOKEN_READ_ACTIONS);
  }

  /**
   * Accepting personal access tokens (`/mcp`, the git remote): their verification reads, and the
   * conditional write of `lastUsedAt`, on the tokens' own items only (`pat#…`).
   */
  grantPersonalTokenUse(grantee: iam.IGrantable): void {
    this.grantTokenVerification(grantee);
    this.grantOnKeys(grantee, ['dynamodb:UpdateItem'], [PERSONAL_TOKEN_KEYS.token]);
  }

  /**
   * Managing them too (`/v1`, `/v1/tokens`): creations and revocations are transactions of puts
   * and updates of the tokens' and their owners' items, and nothing else of the table.
   */
  grantPersonalTokenManagement(grantee: iam.IGrantable): void {
    this.grantTokenVerification(grantee);
    this.grantOnKeys(grantee, ['dynamodb:PutItem', 'dynamodb:UpdateItem'], [PERSONAL_TOKEN_KEYS.token, PERSONAL_TOKEN_KEYS.owner]);
  }

  /** `actions` on the token table's items whose key starts with one of `prefixes` (`dynamodb:LeadingKeys`). */
  private grantOnKeys(grantee: iam.IGrantable, actions: string[], prefixes: string[]): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions,
        resources: [this.tokenTable.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': prefixes.map((p) => `${p}*`) } },
      }),
    );
    this.tokenTable.encryptionKey?.grant(grantee, 'kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey');
  }

  /** The favorites store: list, pin and unpin (conditional transactions on the user's items). */
  grantFavorites(grantee: iam.IGrantable): void {
    grantTable(this.favoritesTable, grantee, FAVORITES_ACTIONS);
  }
}

/** AUTH_PAT_* for the limits a deployment sets (the rest keep their defaults in `loadPersonalTokenLimits`). */
function personalTokenEnvironment(limits: Partial<PersonalTokenLimits>): Record<string, string> {
  const names: Record<keyof PersonalTokenLimits, string> = {
    maxPerUser: 'AUTH_PAT_MAX_PER_USER',
    defaultDays: 'AUTH_PAT_DEFAULT_DAYS',
    maxDays: 'AUTH_PAT_MAX_DAYS',
    lastUsedSeconds: 'AUTH_PAT_LAST_USED_SECONDS',
  };
  return Object.fromEntries(
    (Object.keys(names) as Array<keyof PersonalTokenLimits>).flatMap((k) => (limits[k] === undefined ? [] : [[names[k], String(limits[k])]])),
  );
}

import * as path from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { DEFAULT_ADMIN_GROUP } from '../lambdas/catalog/org/config';
import { ORG_API, ORG_FN } from '../lambdas/catalog/org/routes';
import type { CatalogApi } from './catalog-api';
import { PRIVATE_BUCKET, type CatalogData } from './catalog-data';
import type { Edge } from './edge';
import { addAnyRoutes, addRoutesFromTable, type TableRoutes } from './http-routes';
import type { Identity } from './identity';
import { appFunction, type FunctionLogLevel } from './lambda-function';
import { acknowledge } from './nag';
import { grantTable } from './tables';

export interface OrgRegistryProps {
  readonly data: CatalogData;
  readonly auth: Identity;
  /** The catalog API: its HTTP API carries the routes, its function's settings are the org function's base. */
  readonly api: CatalogApi;
  readonly edge: Edge;
  /**
   * The Cognito group whose members may read and replace the allow-list (ORG_ADMIN_GROUP). Created in the user pool.
   * @default 'catalog-admins'
   */
  readonly adminGroup?: string;
  /**
   * The allow-list's key in the settings bucket (ORG_ALLOW_LIST_KEY).
   * @default 'org/allow-list.yaml'
   */
  readonly allowListKey?: string;
  /**
   * How often an instance asks S3 whether the allow-list changed (ORG_ALLOW_LIST_REFRESH_SECONDS).
   * @default Duration.seconds(30)
   */
  readonly refresh?: Duration;
  /** What happens to the settings bucket when it leaves the stack. @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
  readonly reservedConcurrentExecutions?: number;
  readonly logLevel?: FunctionLogLevel;
}

const ENTRY = path.join(__dirname, '..', 'lambdas', 'catalog', 'org', 'handler.ts');

/**
 * The organisation registry (`/org/v0.1`, README "Organisation registry"): a function of its own on
 * the catalog's HTTP API (its routes, and `/org` and `/org/{proxy+}` for its own 404s, 405s and
 * preflights), CloudFront's `/org/*` behaviour, the versioned settings bucket with the allow-list
 * file, and the `catalog-admins` group of the user pool. The function reads the catalog as the
 * catalog function does; it may write only the allow-list object and its lease item.
 */
export class OrgRegistry extends Construct {
  readonly fn: NodejsFunction;
  readonly role: iam.Role;
  /** Operator settings: the allow-list file (versioned: every replace keeps the one before). */
  readonly settingsBucket: s3.Bucket;
  readonly adminGroup: cognito.CfnUserPoolGroup;
  readonly routes: TableRoutes;
  readonly anyRoutes: apigwv2.HttpRoute[];
  readonly allowListKey: string;
  private readonly refreshSeconds: number;

  constructor(scope: Construct, id: string, props: OrgRegistryProps) {
    super(scope, id);
    const { data, auth, api } = props;
    const groupName = props.adminGroup ?? DEFAULT_ADMIN_GROUP;
    this.allowListKey = props.allowListKey ?? 'org/allow-list.yaml';
    this.refreshSeconds = (props.refresh ?? Duration.seconds(30)).toSeconds();

    this.settingsBucket = new s3.Bucket(this, 'SettingsBucket', {
      ...PRIVATE_BUCKET,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // The operator's own data: an edit that went wrong is undone from the version before.
      versioned: true,
      lifecycleRules: [{ id: 'old-versions', noncurrentVersionExpiration: Duration.days(365), abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      serverAccessLogsBucket: data.accessLogsBucket,
      serverAccessLogsPrefix: 's3/settings/',
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    });

    this.adminGroup = new cognito.CfnUserPoolGroup(this, 'AdminGroup', {
      userPoolId: auth.userPool.userPoolId,
      groupName,
      description: "Members may read and replace the organisation registry's allow-list (/org/admin/allow-list)",
    });

    ({ fn: this.fn, role: this.role } = appFunction(this, 'Function', {
      description: 'Organisation registry (/org/v0.1) and the allow-list admin API',
      roleDescription: 'Organisation registry function: reads the catalog and search; writes the allow-list object, its lease and rate-limit buckets',
      entry: ENTRY,
      memorySize: 1024,
      timeout: Duration.seconds(10),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      logLevel: props.logLevel,
      serviceName: ORG_FN,
      environment: {
        ...api.environment,
        // One UpdateItem per new caller: the PartiQL batch permissions stay the catalog function's.
        RATE_BATCH_TAKES: '0',
        ...this.allowListEnvironment(),
        ORG_ADMIN_GROUP: groupName,
      },
    }));
    data.catalogTable.grantReadData(this.role);
    // Rate-limit buckets (UpdateItem) and the writers' lease on the allow-list (UpdateItem, DeleteItem).
    grantTable(data.rateLimitTable, this.role, ['dynamodb:UpdateItem', 'dynamodb:DeleteItem']);
    auth.grantTokenVerification(this.role);
    data.grantSearch(this.role, 'read');
    data.cursorKeysSecret.grantRead(this.role);
    data.originVerifySecret.grantRead(this.role);
    // The one object, read and replaced; ListBucket makes a missing file a 404 (NoSuchKey) rather than a 403.
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['s3:GetObject', 's3:PutObject'], resources: [this.settingsBucket.arnForObjects(this.allowListKey)] }),
    );
    this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [this.settingsBucket.bucketArn] }));

    this.routes = addRoutesFromTable(api.httpApi, ORG_API, { [ORG_FN]: this.fn }, { catchAll: false });
    this.anyRoutes = addAnyRoutes(this, api.httpApi, ['/org/{proxy+}', '/org'], this.fn, { route: 'AnyRoute', integration: 'OrgAnyIntegration' });
    const reason = `The registry routes are public by design (IDEs read them anonymously, as the official registry's). The admin routes verify the bearer in the function (Cognito JWTs with aws-jwt-verify) and require the ${groupName} group from its cognito:groups claim (403 otherwise); an API Gateway JWT authorizer cannot check a group and would answer outside the registry's error shape.`;
    for (const route of [...this.routes.routes.values(), ...this.anyRoutes]) acknowledge(route, 'AwsSolutions-APIG4', reason);

    props.edge.addApiBehavior('/org/*', api.originDomainName);
  }

  /** Where another function finds the allow-list (the site's badges): bucket, key and refresh. */
  allowListEnvironment(): Record<string, string> {
    return {
      ORG_SETTINGS_BUCKET: this.settingsBucket.bucketName,
      ORG_ALLOW_LIST_KEY: this.allowListKey,
      ORG_ALLOW_LIST_REFRESH_SECONDS: String(this.refreshSeconds),
    };
  }

  /** Lets a role read the allow-list object (and learn that it is missing: 404, not 403). */
  grantAllowListRead(role: iam.IRole): void {
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [this.settingsBucket.arnForObjects(this.allowListKey)] }));
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [this.settingsBucket.bucketArn] }));
  }
}

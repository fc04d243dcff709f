import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * OAuth clients of the front: dynamically registered ones (RFC 7591) and, cached, those known by a
 * Client ID Metadata Document. Kept in DynamoDB rather than as Cognito app clients, which a user
 * pool caps. Public clients only (MCP clients hold no secret; PKCE protects the code).
 */
export interface OAuthClient {
  clientId: string;
  /** Exact-match list: `/oauth/authorize` refuses any other redirect URI. */
  redirectUris: string[];
  clientName?: string;
  grantTypes: Array<'authorization_code' | 'refresh_token'>;
  tokenEndpointAuthMethod: 'none';
  /** Epoch seconds. */
  createdAt: number;
  /** Set for a client id that is a metadata-document URL: when to fetch the document again. */
  metadataExpiresAt?: number;
  /** TTL (epoch seconds): registrations that are never used can be made to disappear. */
  expiresAt?: number;
}

export interface ClientStore {
  get(clientId: string): Promise<OAuthClient | undefined>;
  /** Stores a new registration; false when the id is taken. */
  register(client: OAuthClient): Promise<boolean>;
  /** Inserts or replaces (metadata-document clients are refreshed from their URL). */
  put(client: OAuthClient): Promise<void>;
}

/** Table keyed by `clientId`, TTL attribute `expiresAt`. */
export class DynamoClientStore implements ClientStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async get(clientId: string): Promise<OAuthClient | undefined> {
    const out = await this.doc.send(new GetCommand({ TableName: this.table, Key: { clientId } }));
    return out.Item as OAuthClient | undefined;
  }

  async register(client: OAuthClient): Promise<boolean> {
    try {
      await this.doc.send(new PutCommand({ TableName: this.table, Item: client, ConditionExpression: 'attribute_not_exists(clientId)' }));
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  async put(client: OAuthClient): Promise<void> {
    await this.doc.send(new PutCommand({ TableName: this.table, Item: client }));
  }
}

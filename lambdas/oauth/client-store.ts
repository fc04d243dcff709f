import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

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
  /**
   * TTL (epoch seconds): when the client is forgotten. Registrations get a short one, extended by
   * each token grant; readers treat a past value as gone (DynamoDB deletes expired items lazily).
   * Absent on registrations made before expiry existed: they live until their next grant sets it.
   */
  expiresAt?: number;
}

export interface ClientStore {
  get(clientId: string): Promise<OAuthClient | undefined>;
  /** Stores a new registration; false when the id is taken. */
  register(client: OAuthClient): Promise<boolean>;
  /** Inserts or replaces (metadata-document clients are refreshed from their URL). */
  put(client: OAuthClient): Promise<void>;
  /** Moves an existing client's expiry later (never earlier); a client already gone stays gone. */
  extend(clientId: string, expiresAt: number): Promise<void>;
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

  async extend(clientId: string, expiresAt: number): Promise<void> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { clientId },
          UpdateExpression: 'SET expiresAt = :e',
          ConditionExpression: 'attribute_exists(clientId) AND (attribute_not_exists(expiresAt) OR expiresAt < :e)',
          ExpressionAttributeValues: { ':e': expiresAt },
        }),
      );
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return;
      throw err;
    }
  }
}

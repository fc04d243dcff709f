import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { batchGetAll } from '../shared/aws/dynamo-batch';
import { mintOpaque, newFamilyId, parseOpaque, type ParsedOpaque } from './opaque-tokens';
import type { MemoryScope } from './principal';

/**
 * What the OAuth front grants: bound into every credential it issues and read back by the
 * verifier. `resource` is the RFC 8707 resource the grant was made for (this deployment's audience).
 */
export interface Grant {
  sub: string;
  clientId: string;
  scopes: MemoryScope[];
  /** Undefined: every memory of the account; a list: exactly those (the consent step's choice). */
  memories?: string[];
  resource: string;
}

export interface AccessTokenRecord extends Grant {
  familyId: string;
  /** Epoch seconds. */
  issuedAt: number;
  expiresAt: number;
}

export type AccessLookup = { status: 'active'; record: AccessTokenRecord } | { status: 'unknown' | 'revoked' | 'expired' };

export interface IssueOptions {
  /** Existing grant family (a code redemption or a refresh); omitted: a new family. */
  familyId?: string;
  accessTtlSeconds: number;
  /** Omitted: no refresh token. */
  refreshTtlSeconds?: number;
}

export interface IssuedTokens {
  familyId: string;
  /** Epoch seconds the tokens were minted at; expires_in is counted from here, not from a later clock reading. */
  issuedAt: number;
  accessToken: string;
  accessExpiresAt: number;
  refreshToken?: string;
  refreshExpiresAt?: number;
}

export interface AuthorizationCodeGrant extends Grant {
  redirectUri: string;
  /** PKCE S256 challenge (the front refuses `plain` and missing challenges before saving). */
  codeChallenge: string;
}

export type CodeRedemption =
  | { status: 'redeemed'; grant: AuthorizationCodeGrant; familyId: string }
  /** Unknown, expired, of another client, or its family revoked. */
  | { status: 'invalid' }
  /** Used before: its family (every token issued from it) has just been revoked. */
  | { status: 'replayed' };

export type RefreshRotation =
  | { status: 'rotated'; grant: Grant; tokens: IssuedTokens }
  | { status: 'invalid' }
  /** Used before: its family has just been revoked (refresh-token reuse detection). */
  | { status: 'reused' }
  /** The request named a scope the grant does not hold (RFC 6749 §6); the token is left as it was. */
  | { status: 'scope_not_granted'; granted: string[] };

/**
 * The opaque-credential store the OAuth front writes and every API's verifier reads. Credentials
 * are stored only as SHA-256 hashes; each belongs to a family (one authorization grant) whose
 * revocation kills every access and refresh token descended from it.
 */
export interface OpaqueTokenStore {
  findAccessToken(token: string): Promise<AccessLookup>;
  issueTokens(grant: Grant, opts: IssueOptions): Promise<IssuedTokens>;
  /** Stores a single-use authorization code (a new family) and returns it. */
  saveCode(grant: AuthorizationCodeGrant, ttlSeconds: number): Promise<string>;
  redeemCode(code: string, clientId: string): Promise<CodeRedemption>;
  /**
   * Consumes a refresh token (single use) and issues the family's next access and refresh tokens;
   * a request for a scope the grant does not hold consumes nothing.
   */
  rotateRefreshToken(
    token: string,
    clientId: string,
    ttl: { accessTtlSeconds: number; refreshTtlSeconds: number },
    requestedScopes?: readonly string[],
  ): Promise<RefreshRotation>;
  /** RFC 7009: an access token alone; a refresh token or code revokes its family. Unknown tokens are ignored. */
  revoke(token: string, clientId?: string): Promise<void>;
  revokeFamily(familyId: string): Promise<void>;
}

/**
 * Item shapes of the token table (key `pk`, TTL attribute `expiresAt`):
 *   `at#<sha256>`   access token: the grant, familyId, issuedAt, expiresAt, revoked?
 *   `rt#<sha256>`   refresh token: the grant, familyId, issuedAt, expiresAt, usedAt?
 *   `code#<sha256>` authorization code: the grant, redirectUri, codeChallenge, familyId, expiresAt, usedAt?
 *   `fam#<id>`      grant family: sub, clientId, expiresAt, revoked?
 * A credential is valid only while its family item exists and is not revoked (fail closed).
 */
const PK = { access: 'at#', refresh: 'rt#', code: 'code#', family: 'fam#' } as const;

interface CredentialItem extends Grant {
  pk: string;
  kind: 'access' | 'refresh' | 'code';
  familyId: string;
  issuedAt: number;
  expiresAt: number;
  revoked?: boolean;
  usedAt?: number;
  redirectUri?: string;
  codeChallenge?: string;
}

interface FamilyItem {
  pk: string;
  kind: 'family';
  sub: string;
  clientId: string;
  expiresAt: number;
  revoked?: boolean;
}

export class DynamoTokenStore implements OpaqueTokenStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
    /** Milliseconds since the epoch. */
    private readonly clock: () => number = Date.now,
  ) {}

  private nowSeconds(): number {
    return Math.floor(this.clock() / 1000);
  }

  async findAccessToken(token: string): Promise<AccessLookup> {
    const parsed = parseOpaque(token);
    if (parsed?.kind !== 'access') return { status: 'unknown' };
    const { item, family } = await this.readWithFamily(PK.access, parsed);
    if (item?.kind !== 'access' || item.familyId !== parsed.familyId) return { status: 'unknown' };
    if (item.revoked || !family || family.revoked) return { status: 'revoked' };
    if (item.expiresAt <= this.nowSeconds()) return { status: 'expired' };
    return { status: 'active', record: grantRecord(item) };
  }

  async issueTokens(grant: Grant, opts: IssueOptions): Promise<IssuedTokens> {
    const now = this.nowSeconds();
    const familyId = opts.familyId ?? newFamilyId();
    const accessToken = mintOpaque('access', familyId);
    const accessExpiresAt = now + opts.accessTtlSeconds;
    const refreshToken = opts.refreshTtlSeconds === undefined ? undefined : mintOpaque('refresh', familyId);
    const refreshExpiresAt = opts.refreshTtlSeconds === undefined ? undefined : now + opts.refreshTtlSeconds;
    const familyExpiresAt = Math.max(accessExpiresAt, refreshExpiresAt ?? 0);
    const base = { ...grantFields(grant), familyId, issuedAt: now };
    const items: NonNullable<TransactWriteCommandInput['TransactItems']> = [
      { Put: { TableName: this.table, Item: { pk: PK.access + hashOf(accessToken), kind: 'access', ...base, expiresAt: accessExpiresAt } } },
    ];
    if (refreshToken !== undefined) {
      items.push({ Put: { TableName: this.table, Item: { pk: PK.refresh + hashOf(refreshToken), kind: 'refresh', ...base, expiresAt: refreshExpiresAt } } });
    }
    items.push(
      opts.familyId === undefined
        ? { Put: { TableName: this.table, Item: familyItem(familyId, grant, familyExpiresAt), ConditionExpression: 'attribute_not_exists(pk)' } }
        : {
            // Tokens join an existing family only while it is alive: a revocation racing this issue wins.
            Update: {
              TableName: this.table,
              Key: { pk: PK.family + familyId },
              UpdateExpression: 'SET expiresAt = :exp',
              ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(revoked)',
              ExpressionAttributeValues: { ':exp': familyExpiresAt },
            },
          },
    );
    try {
      await this.doc.send(new TransactWriteCommand({ TransactItems: items }));
    } catch (err) {
      if (err instanceof TransactionCanceledException) throw new FamilyRevokedError(familyId);
      throw err;
    }
    return {
      familyId,
      issuedAt: now,
      accessToken,
      accessExpiresAt,
      ...(refreshToken !== undefined && { refreshToken, refreshExpiresAt }),
    };
  }

  async saveCode(grant: AuthorizationCodeGrant, ttlSeconds: number): Promise<string> {
    const now = this.nowSeconds();
    const familyId = newFamilyId();
    const code = mintOpaque('code', familyId);
    const item: CredentialItem = {
      pk: PK.code + hashOf(code),
      kind: 'code',
      ...grantFields(grant),
      redirectUri: grant.redirectUri,
      codeChallenge: grant.codeChallenge,
      familyId,
      issuedAt: now,
      expiresAt: now + ttlSeconds,
    };
    await this.doc.send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: this.table, Item: item } },
          { Put: { TableName: this.table, Item: familyItem(familyId, grant, now + ttlSeconds), ConditionExpression: 'attribute_not_exists(pk)' } },
        ],
      }),
    );
    return code;
  }

  async redeemCode(code: string, clientId: string): Promise<CodeRedemption> {
    const parsed = parseOpaque(code);
    if (parsed?.kind !== 'code') return { status: 'invalid' };
    const { item, family } = await this.readWithFamily(PK.code, parsed);
    if (item?.kind !== 'code' || item.familyId !== parsed.familyId || item.clientId !== clientId) return { status: 'invalid' };
    if (!(await this.markUsed(item))) {
      await this.revokeFamily(item.familyId);
      return { status: 'replayed' };
    }
    if (!family || family.revoked || item.expiresAt <= this.nowSeconds()) return { status: 'invalid' };
    return {
      status: 'redeemed',
      familyId: item.familyId,
      grant: { ...grantFields(item), redirectUri: item.redirectUri ?? '', codeChallenge: item.codeChallenge ?? '' },
    };
  }

  async rotateRefreshToken(
    token: string,
    clientId: string,
    ttl: { accessTtlSeconds: number; refreshTtlSeconds: number },
    /** Scopes the refresh request asked for: each must be one the grant holds. */
    requestedScopes: readonly string[] = [],
  ): Promise<RefreshRotation> {
    const parsed = parseOpaque(token);
    if (parsed?.kind !== 'refresh') return { status: 'invalid' };
    const { item, family } = await this.readWithFamily(PK.refresh, parsed);
    if (item?.kind !== 'refresh' || item.familyId !== parsed.familyId || item.clientId !== clientId) return { status: 'invalid' };
    if (!family || family.revoked || item.expiresAt <= this.nowSeconds()) return { status: 'invalid' };
    const granted: readonly string[] = grantFields(item).scopes;
    if (requestedScopes.some((s) => !granted.includes(s))) return { status: 'scope_not_granted', granted: [...granted] };
    if (!(await this.markUsed(item))) {
      await this.revokeFamily(item.familyId);
      return { status: 'reused' };
    }
    const grant = grantFields(item);
    try {
      const tokens = await this.issueTokens(grant, { familyId: item.familyId, ...ttl });
      return { status: 'rotated', grant, tokens };
    } catch (err) {
      if (err instanceof FamilyRevokedError) return { status: 'invalid' };
      throw err;
    }
  }

  async revoke(token: string, clientId?: string): Promise<void> {
    const parsed = parseOpaque(token);
    if (!parsed) return;
    if (parsed.kind === 'access') {
      try {
        await this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: PK.access + parsed.hash },
            UpdateExpression: 'SET revoked = :t',
            ConditionExpression: clientId === undefined ? 'attribute_exists(pk)' : 'attribute_exists(pk) AND clientId = :c',
            ExpressionAttributeValues: { ':t': true, ...(clientId !== undefined && { ':c': clientId }) },
          }),
        );
      } catch (err) {
        if (!(err instanceof ConditionalCheckFailedException)) throw err;
      }
      return;
    }
    const out = await this.doc.send(new GetCommand({ TableName: this.table, Key: { pk: PK[parsed.kind] + parsed.hash }, ConsistentRead: true }));
    const item = out.Item as CredentialItem | undefined;
    if (!item || item.familyId !== parsed.familyId || (clientId !== undefined && item.clientId !== clientId)) return;
    await this.revokeFamily(item.familyId);
  }

  async revokeFamily(familyId: string): Promise<void> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: PK.family + familyId },
          UpdateExpression: 'SET revoked = :t, revokedAt = :now',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':t': true, ':now': this.nowSeconds() },
        }),
      );
    } catch (err) {
      // No family item: its credentials are already invalid (fail closed), nothing to record.
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }

  /** Single use: the first caller to set `usedAt` wins; everyone after learns it was replayed. */
  private async markUsed(item: CredentialItem): Promise<boolean> {
    if (item.usedAt !== undefined) return false;
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: item.pk },
          UpdateExpression: 'SET usedAt = :now',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(usedAt)',
          ExpressionAttributeValues: { ':now': this.nowSeconds() },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /** The credential and its family in one strongly consistent round trip. */
  private async readWithFamily(prefix: string, parsed: ParsedOpaque): Promise<{ item?: CredentialItem; family?: FamilyItem }> {
    const keys = [{ pk: prefix + parsed.hash }, { pk: PK.family + parsed.familyId }];
    const found = await batchGetAll(this.doc, this.table, keys, {
      consistent: true,
      attempts: 3,
      exhausted: 'token table kept returning unprocessed keys',
    });
    return {
      item: found.find((i) => i.pk === keys[0].pk) as CredentialItem | undefined,
      family: found.find((i) => i.pk === keys[1].pk) as FamilyItem | undefined,
    };
  }
}

/** Thrown by `issueTokens` when the family is gone or revoked (or, for a new family, its id collided). */
export class FamilyRevokedError extends Error {
  constructor(familyId: string) {
    super(`grant family ${familyId} is revoked or unknown`);
    this.name = 'FamilyRevokedError';
  }
}

function hashOf(token: string): string {
  return (parseOpaque(token) as ParsedOpaque).hash;
}

function grantFields(g: Grant): Grant {
  return {
    sub: g.sub,
    clientId: g.clientId,
    scopes: [...g.scopes],
    ...(g.memories !== undefined && { memories: [...g.memories] }),
    resource: g.resource,
  };
}

function grantRecord(item: CredentialItem): AccessTokenRecord {
  return { ...grantFields(item), familyId: item.familyId, issuedAt: item.issuedAt, expiresAt: item.expiresAt };
}

function familyItem(familyId: string, grant: Grant, expiresAt: number): FamilyItem {
  return { pk: PK.family + familyId, kind: 'family', sub: grant.sub, clientId: grant.clientId, expiresAt };
}

import { randomBytes } from 'node:crypto';
import { ensureTables } from '../../bin/local-stack/provision';
import { crawlerTableDefinitions, DynamoCrawlState } from '../../lambdas/crawler/adapters/dynamo-crawl-state';
import { MemoryCrawlState } from '../../lambdas/crawler/adapters/memory-crawl-state';
import { documentClient, dynamoClient } from '../../lambdas/shared/aws/clients';
import { crawlStateContract } from '../support/crawl-state-contract';

/** One contract, both stores: the in-memory one the service tests use and the DynamoDB one the crawler runs on. */
const ddb = dynamoClient({ region: 'us-east-1', dynamoEndpoint: process.env.TEST_DYNAMODB_ENDPOINT });
const doc = documentClient(ddb);
afterAll(() => ddb.destroy());

crawlStateContract('in memory', async () => new MemoryCrawlState());
crawlStateContract('DynamoDB Local', async () => {
  const table = `crawl-contract-${randomBytes(4).toString('hex')}`;
  await ensureTables(ddb, crawlerTableDefinitions(table));
  return new DynamoCrawlState(doc, table);
});

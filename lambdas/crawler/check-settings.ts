/** The check schedule's settings (`checks.ts`), apart so configuration (read by CDK too) loads no check code. */
export interface CheckSettings {
  /** Remotes checked per server (as the crawler's health step). */
  maxRemotes: number;
  /** Servers checked at once per batch (each host keeps its own limit in the HTTP client). */
  concurrency: number;
  /** Failed checks in a row that mark a server down. */
  downAfter: number;
  /** Servers per batch (one Map iteration in AWS). */
  batchSize: number;
}

export const DEFAULT_CHECK_SETTINGS: CheckSettings = { maxRemotes: 3, concurrency: 16, downAfter: 3, batchSize: 100 };

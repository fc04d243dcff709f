import { Logger } from '@aws-lambda-powertools/logger';

/** One structured JSON logger per process (Powertools); the request id is appended per request. */
export const logger = new Logger({
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'mcp-catalog',
  logLevel: (process.env.LOG_LEVEL as 'INFO' | 'DEBUG' | 'WARN' | 'ERROR' | 'SILENT' | undefined) ?? 'INFO',
});

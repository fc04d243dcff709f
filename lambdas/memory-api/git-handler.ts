import { createMemoryApiHandler } from './api';
import { settingsDepsSource } from './settings';
import { streamingEntry } from './streaming';

/**
 * The git remote's Lambda (AWS): the whole `/v1` pipeline (so a path CloudFront routes here by
 * mistake is still answered right) behind a function URL in RESPONSE_STREAM mode, which CloudFront
 * reaches for `/v1/memories/*.git/*`. A clone of a large memory streams up to 200 MB, where the
 * buffered `/v1` function behind API Gateway stops at 6 MB (see README, "Git over HTTPS in AWS").
 * The verifier's settings come from `MEMORY_SETTINGS_PARAMETER` (`settings.ts`).
 */
export const handler = streamingEntry(createMemoryApiHandler(settingsDepsSource()));

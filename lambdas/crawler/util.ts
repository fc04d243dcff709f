/** Runs `fn` over `items` with at most `limit` calls in flight; rejects with the first error after all settle. */
export async function mapLimit<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let firstError: unknown;
  let failed = false;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
      while (next < items.length) {
        const i = next++;
        try {
          await fn(items[i], i);
        } catch (err) {
          if (!failed) {
            failed = true;
            firstError = err;
          }
        }
      }
    }),
  );
  if (failed) throw firstError;
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

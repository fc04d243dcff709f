/** A clock that moves one second per reading: commits get distinct, ordered timestamps. */
export function tickingClock(start = Date.UTC(2026, 0, 1, 12, 0, 0)): () => Date {
  let t = start;
  return () => {
    t += 1000;
    return new Date(t);
  };
}

/**
 * What a streamed export holds in hand at once (note texts fetched and not yet written, objects read
 * ahead, output not yet taken by the reader) and the most it ever held: the bound that makes an
 * export of any size stream through a small heap, counted where the bytes are taken and let go, so a
 * test can check the bound itself rather than a timing.
 */
export class HeldBytes {
  private now = 0;
  /** The most held at once so far. */
  peak = 0;

  change(delta: number): void {
    this.now += delta;
    if (this.now > this.peak) this.peak = this.now;
  }

  get current(): number {
    return this.now;
  }
}

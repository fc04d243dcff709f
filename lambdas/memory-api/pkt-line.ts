/**
 * git's pkt-line framing (gitprotocol-common): four hex digits of length (the four included), then
 * the payload; `0000` is a flush. Side-band framing puts a band number (1 data, 2 progress, 3 fatal
 * error) before each payload.
 */
export const FLUSH = Buffer.from('0000', 'latin1');

/** Largest pkt-line payload (65520 bytes minus the 4-byte length). */
const MAX_PAYLOAD = 65516;

export function pkt(payload: string | Uint8Array): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.from(payload);
  if (body.length > MAX_PAYLOAD) throw new Error('pkt-line payload too long');
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0'), 'latin1'), body]);
}

export type Packet = { kind: 'data'; payload: Buffer } | { kind: 'flush' } | { kind: 'delim' };

export class PktError extends Error {}

/**
 * Reads pkt-lines from the start of `buf` until `stop` says so (after a packet) or the buffer ends
 * on a packet boundary; returns them and the offset after the last one read (what follows may be
 * raw data, e.g. the pack after a push's commands).
 */
export function readPackets(buf: Buffer, stop: (p: Packet, count: number) => boolean = () => false): { packets: Packet[]; offset: number } {
  const packets: Packet[] = [];
  let pos = 0;
  while (pos < buf.length) {
    if (pos + 4 > buf.length) throw new PktError('truncated pkt-line');
    const hex = buf.toString('latin1', pos, pos + 4);
    if (!/^[0-9a-f]{4}$/.test(hex)) throw new PktError('malformed pkt-line length');
    const len = Number.parseInt(hex, 16);
    let p: Packet;
    if (len === 0) {
      p = { kind: 'flush' };
      pos += 4;
    } else if (len === 1) {
      p = { kind: 'delim' };
      pos += 4;
    } else {
      if (len < 4 || pos + len > buf.length) throw new PktError('truncated pkt-line');
      p = { kind: 'data', payload: buf.subarray(pos + 4, pos + len) };
      pos += len;
    }
    packets.push(p);
    if (stop(p, packets.length)) break;
  }
  return { packets, offset: pos };
}

/** The text of a data packet without its trailing newline. */
export function text(p: Packet): string {
  return p.kind === 'data' ? p.payload.toString('utf8').replace(/\n$/, '') : '';
}

/**
 * Data in side-band packets on `band`: 65515 bytes of data per packet with side-band-64k, 995
 * with the old side-band; without side-band (`size` 0) the bytes go as they are.
 */
export function sideband(band: 1 | 2 | 3, data: Uint8Array, size: number): Buffer[] {
  if (size === 0) return band === 1 ? [Buffer.from(data)] : [];
  const out: Buffer[] = [];
  for (let i = 0; i < data.length; i += size) out.push(pkt(Buffer.concat([Buffer.from([band]), Buffer.from(data.subarray(i, i + size))])));
  return out;
}

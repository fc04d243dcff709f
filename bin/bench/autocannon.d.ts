// The part of autocannon's API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  export interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    /** Returns the request to send (called before each one). */
    setupRequest?: (req: Request, context: Record<string, unknown>) => Request;
  }
  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    /** Requests to send, instead of a duration. */
    amount?: number;
    pipelining?: number;
    requests?: Request[];
  }
  export interface Result {
    /** `total`: requests completed in the run. */
    requests: { average: number; p50: number; total: number };
    non2xx: number;
    errors: number;
    '2xx': number;
    /** Seconds. */
    duration: number;
    statusCodeStats: Record<string, { count: number }>;
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}

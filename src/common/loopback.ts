/**
 * A Host header (or URL host) naming this machine's loopback: what a local server answers when
 * it listens on 127.0.0.1, so that a web page which rebinds its own name to 127.0.0.1 is refused.
 */
const LOOPBACK_HOST = /^(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/i

export function isLoopbackHost (host: string): boolean {
  return LOOPBACK_HOST.test(host)
}

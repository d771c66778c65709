import { closeSync, openSync, readSync } from 'node:fs';

const systemRandomDevice = '/dev/urandom';

/**
 * `byteCount` bytes from the operating system's random source, as lowercase hex. Read from
 * `/dev/urandom` where there is one (Linux, macOS), so that a process drawing a few random ids
 * does not load `node:crypto`: that module's OpenSSL start-up alone adds about 2 MB to the
 * resident memory of a process that otherwise only relays bytes (the proxy). Elsewhere (Windows)
 * from `node:crypto`, loaded on first use.
 */
export function randomHex(byteCount: number): string {
  if (!Number.isInteger(byteCount) || byteCount <= 0) {
    throw new RangeError(`randomHex needs a positive whole number of bytes, not ${String(byteCount)}`);
  }
  const bytes = Buffer.alloc(byteCount);
  let descriptor: number | undefined;
  try {
    descriptor = openSync(systemRandomDevice, 'r');
  } catch {
    // No random device: node:crypto draws from the system's source instead.
    return process.getBuiltinModule('node:crypto').randomFillSync(bytes).toString('hex');
  }
  try {
    let filled = 0;
    while (filled < byteCount) filled += readSync(descriptor, bytes, filled, byteCount - filled, null);
  } finally {
    closeSync(descriptor);
  }
  return bytes.toString('hex');
}

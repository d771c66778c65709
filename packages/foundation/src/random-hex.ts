import { closeSync, openSync, readSync } from 'node:fs';

const systemRandomDevice = '/dev/urandom';

/**
 * `byteCount` bytes from the operating system's random source, as lowercase hex. Read from
 * `/dev/urandom` where there is one (Linux, macOS), so that a process drawing a few random ids
 * does not load `node:crypto`: loading it (and starting OpenSSL) adds 0.8 MB to the resident
 * memory of a Node process that has child_process loaded already, as the proxy has, and 2.3 MB
 * to a bare one. Elsewhere (Windows) from `node:crypto`, loaded on first use.
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
    while (filled < byteCount) {
      const read = readSync(descriptor, bytes, filled, byteCount - filled, null);
      if (read === 0) throw new Error(`${systemRandomDevice} gave no bytes`);
      filled += read;
    }
  } finally {
    closeSync(descriptor);
  }
  return bytes.toString('hex');
}

import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { imageSize as ImageSize } from 'image-size';
import type { PNG as Png } from 'pngjs';

// Loaded on the first image output, not at start-up (about fifty modules between them).
const loadDependency = createRequire(import.meta.url);
let loaded: { readonly imageSize: typeof ImageSize; readonly PNG: typeof Png } | undefined;
function imageLibraries(): NonNullable<typeof loaded> {
  loaded ??= {
    imageSize: (loadDependency('image-size') as { imageSize: typeof ImageSize }).imageSize,
    PNG: (loadDependency('pngjs') as { PNG: typeof Png }).PNG,
  };
  return loaded;
}

/** An image ready to be MCP `image` content, or why it is not shown. */
export type PreparedImage =
  | {
      readonly shown: true;
      readonly mimeType: string;
      /** Base64, as MCP `image` content carries it. */
      readonly data: string;
      readonly width: number | undefined;
      readonly height: number | undefined;
      /** Set when it was scaled down: the size in the notebook. */
      readonly original?: { readonly width: number; readonly height: number; readonly bytes: number };
    }
  | {
      readonly shown: false;
      readonly mimeType: string;
      readonly width: number | undefined;
      readonly height: number | undefined;
      /** Decoded bytes in the notebook. */
      readonly bytes: number;
      readonly reason: string;
    };

/** The bounds one image must stay within. */
export interface ImageBounds {
  /** Base64 characters. */
  readonly maxBase64Chars: number;
  /** Pixels of the longest edge. */
  readonly maxEdgePixels: number;
}

/** Scaled-down images kept, so reading one cell again does not scale its large plot again (a second or so). */
const scaledCacheSize = 16;
const scaledCache = new Map<string, PreparedImage>();

/**
 * An nbformat image (`base64`, whitespace removed) within `bounds`: as it is when it fits; a PNG
 * too large is scaled down (box filter, pngjs) until it fits; another type too large, or data
 * that does not decode as its type, is not shown, saying why. The last few scaled results are
 * remembered by the image's digest. Pure but for that cache (CPU only).
 */
export function prepareImage(mimeType: string, base64: string, bounds: ImageBounds): PreparedImage {
  if (base64.length <= bounds.maxBase64Chars && base64.length < 64 * 1024)
    return prepareUncached(mimeType, base64, bounds);
  const key = `${mimeType} ${bounds.maxBase64Chars} ${bounds.maxEdgePixels} ${createHash('sha256').update(base64).digest('hex')}`;
  const cached = scaledCache.get(key);
  if (cached !== undefined) {
    scaledCache.delete(key);
    scaledCache.set(key, cached);
    return cached;
  }
  const prepared = prepareUncached(mimeType, base64, bounds);
  scaledCache.set(key, prepared);
  while (scaledCache.size > scaledCacheSize) scaledCache.delete(scaledCache.keys().next().value as string);
  return prepared;
}

function prepareUncached(mimeType: string, base64: string, bounds: ImageBounds): PreparedImage {
  const { imageSize, PNG } = imageLibraries();
  const bytes = Buffer.from(base64, 'base64');
  let width: number | undefined;
  let height: number | undefined;
  try {
    const size = imageSize(bytes);
    width = size.width;
    height = size.height;
  } catch {
    return {
      shown: false,
      mimeType,
      width,
      height,
      bytes: bytes.length,
      reason: `the data is not a valid ${mimeType}`,
    };
  }
  const longEdge = Math.max(width ?? 0, height ?? 0);
  if (base64.length <= bounds.maxBase64Chars && longEdge <= bounds.maxEdgePixels) {
    return { shown: true, mimeType, data: base64, width, height };
  }
  const tooLarge = `${describeBytes(bytes.length)}${width && height ? `, ${width}×${height} px` : ''} is over the bound of one image (${describeBytes((bounds.maxBase64Chars * 3) / 4)}, ${bounds.maxEdgePixels} px)`;
  if (mimeType !== 'image/png' || width === undefined || height === undefined) {
    return { shown: false, mimeType, width, height, bytes: bytes.length, reason: tooLarge };
  }
  let decoded: Png;
  try {
    decoded = PNG.sync.read(bytes);
  } catch {
    return { shown: false, mimeType, width, height, bytes: bytes.length, reason: 'the data is not a valid image/png' };
  }
  let scale = Math.min(1, bounds.maxEdgePixels / longEdge);
  for (let attempt = 0; attempt < 6; attempt += 1) {
    const scaled = downscale(PNG, decoded, scale);
    const data = PNG.sync.write(scaled, { filterType: 4 }).toString('base64');
    if (data.length <= bounds.maxBase64Chars) {
      return {
        shown: true,
        mimeType,
        data,
        width: scaled.width,
        height: scaled.height,
        original: { width, height, bytes: bytes.length },
      };
    }
    scale *= Math.max(0.3, Math.sqrt(bounds.maxBase64Chars / data.length) * 0.9);
  }
  return { shown: false, mimeType, width, height, bytes: bytes.length, reason: tooLarge };
}

/** `image` scaled by `scale` (≤ 1), each target pixel the mean of the source pixels it covers. */
function downscale(PNG: typeof Png, image: Png, scale: number): Png {
  const width = Math.max(1, Math.round(image.width * scale));
  const height = Math.max(1, Math.round(image.height * scale));
  if (width === image.width && height === image.height) return image;
  const target = new PNG({ width, height });
  const xRatio = image.width / width;
  const yRatio = image.height / height;
  for (let y = 0; y < height; y += 1) {
    const y0 = Math.floor(y * yRatio);
    const y1 = Math.max(y0 + 1, Math.floor((y + 1) * yRatio));
    for (let x = 0; x < width; x += 1) {
      const x0 = Math.floor(x * xRatio);
      const x1 = Math.max(x0 + 1, Math.floor((x + 1) * xRatio));
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let sy = y0; sy < y1; sy += 1) {
        for (let sx = x0; sx < x1; sx += 1) {
          const at = (sy * image.width + sx) * 4;
          r += image.data[at] as number;
          g += image.data[at + 1] as number;
          b += image.data[at + 2] as number;
          a += image.data[at + 3] as number;
        }
      }
      const count = (y1 - y0) * (x1 - x0);
      const to = (y * width + x) * 4;
      target.data[to] = Math.round(r / count);
      target.data[to + 1] = Math.round(g / count);
      target.data[to + 2] = Math.round(b / count);
      target.data[to + 3] = Math.round(a / count);
    }
  }
  return target;
}

/** `bytes` for a message: `812 B`, `23.4 KB`, `5.1 MB`. */
export function describeBytes(bytes: number): string {
  if (bytes < 1000) return `${Math.round(bytes)} B`;
  if (bytes < 1_000_000) return `${Math.round(bytes / 100) / 10} KB`;
  return `${Math.round(bytes / 100_000) / 10} MB`;
}

import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { prepareImage } from './prepare-image.js';

/** A PNG of noise (so it does not compress), `width`×`height`, as base64. */
function noisePng(width: number, height: number): string {
  const png = new PNG({ width, height });
  let seed = 7;
  for (let at = 0; at < png.data.length; at += 1) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    png.data[at] = at % 4 === 3 ? 255 : seed >>> 24;
  }
  return PNG.sync.write(png).toString('base64');
}

describe(prepareImage, () => {
  it('shows an image within its bounds as it is, with its size', () => {
    const data = noisePng(64, 48);
    expect(prepareImage('image/png', data, { maxBase64Chars: 1_000_000, maxEdgePixels: 1568 })).toEqual({
      shown: true,
      mimeType: 'image/png',
      data,
      width: 64,
      height: 48,
    });
  });

  it('scales a PNG over its bounds down until it fits, keeping its aspect, and says from what', () => {
    const data = noisePng(400, 200);
    const prepared = prepareImage('image/png', data, { maxBase64Chars: 60_000, maxEdgePixels: 300 });
    expect(prepared.shown).toBe(true);
    if (!prepared.shown) return;
    expect(prepared.data.length).toBeLessThanOrEqual(60_000);
    const decoded = PNG.sync.read(Buffer.from(prepared.data, 'base64'));
    expect(decoded.width).toBeLessThanOrEqual(300);
    expect(decoded.width).toBe(prepared.width);
    expect(Math.abs(decoded.width / decoded.height - 2)).toBeLessThan(0.05);
    expect(prepared.original).toEqual({ width: 400, height: 200, bytes: Buffer.from(data, 'base64').length });
  });

  it('does not show another type over its bounds, nor data that is not an image, and says why', () => {
    const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.from([20, 0, 10, 0]), Buffer.alloc(3000)]).toString(
      'base64',
    );
    expect(prepareImage('image/gif', gif, { maxBase64Chars: 100, maxEdgePixels: 10 })).toMatchObject({
      shown: false,
      width: 20,
      height: 10,
      reason: expect.stringMatching(/is over the bound of one image/),
    });
    expect(prepareImage('image/png', 'bm90IGFuIGltYWdl', { maxBase64Chars: 100, maxEdgePixels: 10 })).toMatchObject({
      shown: false,
      reason: 'the data is not a valid image/png',
    });
  });
});

import { describe, expect, it } from 'vitest';
import { checkPackageSpecs, installFingerprint } from './package-specs.js';

function refusal(language: 'python' | 'r', specs: string[]): string {
  try {
    checkPackageSpecs(language, specs);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`accepted: ${specs.join(' ')}`);
}

describe('checkPackageSpecs', () => {
  it('accepts Python requirements and local package files, normalizing names and extras', () => {
    expect(
      checkPackageSpecs('python', [
        'Pandas',
        'scikit_learn[Plot,alldeps]>=1.2,<2',
        'requests==2.31.0',
        'zope.interface~=6.0',
        '/home/me/dist/demo-0.1-py3-none-any.whl',
        '/tmp/pkg-1.0.tar.gz',
      ]).map((spec) => [spec.normalized, spec.local]),
    ).toEqual([
      ['pandas', false],
      ['scikit-learn[alldeps,plot]>=1.2,<2', false],
      ['requests==2.31.0', false],
      ['zope-interface~=6.0', false],
      ['/home/me/dist/demo-0.1-py3-none-any.whl', true],
      ['/tmp/pkg-1.0.tar.gz', true],
    ]);
  });

  it('refuses options, markers, URLs, whitespace, relative or dotted paths and other files', () => {
    const cases: [string, string][] = [
      ['-e', 'is an option'],
      ['--index-url=http://x', 'is an option'],
      ['demo; os_name=="nt"', 'whitespace'],
      ['demo;rm', 'is not a requirement'],
      ['demo ==1', 'whitespace'],
      ['demo\t', 'whitespace'],
      ['demo\u00a0', 'whitespace'],
      ['demo @ https://example.com/x.whl', 'whitespace'],
      ['demo@https://example.com/x.whl', 'is not a requirement'],
      ['demo==', 'version clause'],
      ['demo=>1', 'version clause'],
      ['demo[', 'malformed [extras]'],
      ['./demo.whl', 'is not a requirement'],
      ['/tmp/../etc/demo.whl', 'plain absolute path'],
      ['/tmp/demo.exe', 'is not a .whl, .tar.gz, .zip file'],
      ['/tmp/$(id).whl', 'plain absolute path'],
      ['', 'is empty'],
    ];
    for (const [spec, why] of cases) expect(refusal('python', [spec]), spec).toContain(why);
    expect(refusal('python', ['demo', 'Demo'])).toContain('twice');
    expect(refusal('python', [])).toContain('at least one');
    expect(
      refusal(
        'python',
        Array.from({ length: 21 }, (_, index) => `p${index}`),
      ),
    ).toContain('at most 20');
  });

  it('accepts R package names and local tarballs, not both in one install, nor versions', () => {
    expect(checkPackageSpecs('r', ['data.table', 'ggplot2']).map((spec) => spec.normalized)).toEqual([
      'data.table',
      'ggplot2',
    ]);
    expect(checkPackageSpecs('r', ['/tmp/demo_0.1.tar.gz'])[0]?.local).toBe(true);
    expect(refusal('r', ['ggplot2>=3'])).toContain('no version specifier');
    expect(refusal('r', ['2fast'])).toContain('not an R package name');
    expect(refusal('r', ['/tmp/demo.whl'])).toContain('.tar.gz, .tgz, .zip');
    expect(refusal('r', ['ggplot2', '/tmp/demo_0.1.tar.gz'])).toContain('in two calls');
  });
});

describe('installFingerprint', () => {
  const specs = checkPackageSpecs('python', ['Pandas>=2', 'numpy']);
  const fingerprint = installFingerprint(specs, '/v/bin/python', '/v', false);

  it('is sha256 hex over the normalized specs in any order, the interpreter, the prefix and the restart', () => {
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(installFingerprint(checkPackageSpecs('python', ['numpy', 'pandas>=2']), '/v/bin/python', '/v', false)).toBe(
      fingerprint,
    );
    expect(installFingerprint(specs, '/w/bin/python', '/v', false)).not.toBe(fingerprint);
    expect(installFingerprint(specs, '/v/bin/python', '/w', false)).not.toBe(fingerprint);
    expect(installFingerprint(specs, '/v/bin/python', '/v', true)).not.toBe(fingerprint);
    expect(
      installFingerprint(checkPackageSpecs('python', ['pandas>=3', 'numpy']), '/v/bin/python', '/v', false),
    ).not.toBe(fingerprint);
  });
});

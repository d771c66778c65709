import { describe, expect, it } from 'vitest';
import { pythonDefinedNames } from './python-defined-names.js';

describe(pythonDefinedNames, () => {
  it('lists top-level assignments, functions, classes and imports, each once, in the order first defined', () => {
    const names = pythonDefinedNames([
      'import numpy as np, os\nfrom pathlib import Path, PurePath as PP\nfrom math import *\nx = 1\na, (b, *c) = 1, (2, 3)\ny: int = 2\nz += 1\nu = v = 3',
      'def f(a=1):\n    inner = 2\n    return a\n\nasync def g():\n    pass\nclass C(Base):\n    attr = 1\n',
      'for i in range(3):\n    total = i\nwith open("f") as fh, open("g") as gh:\n    pass\nx = 2\n',
    ]);
    expect(names).toEqual({
      variables: ['x', 'a', 'b', 'c', 'y', 'z', 'u', 'v', 'i', 'fh', 'gh'],
      functions: ['f', 'g'],
      classes: ['C'],
      imports: ['numpy as np', 'os', 'Path from pathlib', 'PurePath as PP from pathlib', '* from math'],
    });
  });

  it('skips what binds no top-level name: comparisons, calls with keywords, attributes and subscripts, brackets, strings, magics', () => {
    const names = pythonDefinedNames([
      'x == 1\nprint(a=1)\nobj.attr = 2\nd["k"] = 3\nresult = f(\n    inner=1,\n)\ns = """\nnot_a_name = 1\n"""\n%timeit q = 1\n!ls\n# c = 1\nif True:\n    hidden = 1\nw <= 2',
    ]);
    expect(names.variables).toEqual(['result', 's']);
    expect(names.functions).toEqual([]);
  });
});

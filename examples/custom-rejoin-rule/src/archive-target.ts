/** The kind this plugin owns (dotted: a contributed kind never collides with core's). */
export const archiveKind = 'acme.archive';

/** `archive:<name>.ipynb` as agents and the handoff write it. */
export const archiveScheme = 'archive:';

/** A notebook in the archive directory, by file name. */
export interface ArchiveTarget {
  readonly kind: typeof archiveKind;
  /** The file name in the archive (`report.ipynb`); also the working copy's name. */
  readonly name: string;
}

/** Narrows a target to this plugin's kind. */
export function isArchiveTarget(target: { readonly kind: string }): target is ArchiveTarget {
  return target.kind === archiveKind;
}

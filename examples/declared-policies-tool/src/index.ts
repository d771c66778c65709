export { createDeclaredPoliciesPlugin } from './create-declared-policies-plugin.js';
export { createRerunAllCellsTool } from './create-rerun-all-cells-tool.js';
export { RerunAllCellsContribution } from './rerun-all-cells-contribution.js';

// The identifier rules live with the schemas, which the request core and these helpers both stand on.
export {
  type ParsedReference,
  parseReference,
  REFERENCE_INFIXES,
  type ReferenceKind,
  referenceProblem,
} from '../schemas/references.js';

/** The tool-call argument preview lives in common/ (the sessions projection uses it too). */
export { ARGUMENT_PREVIEW_MAX_CHARS, argumentPreview } from '../common/argument-preview';

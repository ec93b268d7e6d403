export * from './skill-md-rules';
export * from './text-length';
export { splitAllowedTools } from './manifest-fields';
export * from './skill-md';
export * from './package-paths';

export * from './skill-md';
export * from './package-paths';

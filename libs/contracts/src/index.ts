export * from './ws';
export * from './rest';
export * from './metadata';

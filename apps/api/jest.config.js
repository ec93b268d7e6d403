/** Jest for the API: unit specs next to the code (src/**\/*.spec.ts) and e2e in test/*.e2e-spec.ts. */
module.exports = {
  rootDir: '.',
  roots: ['<rootDir>', '<rootDir>/../../libs'],
  testEnvironment: 'node',
  testMatch: [
    '<rootDir>/src/**/*.spec.ts',
    '<rootDir>/test/**/*.e2e-spec.ts',
    '<rootDir>/../../libs/*/src/**/*.spec.ts',
  ],
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper: {
    '^@cashcode/contracts$': '<rootDir>/../../libs/contracts/src/index.ts',
    '^@cashcode/skill-format$': '<rootDir>/../../libs/skill-format/src/index.ts',
  },
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs|@standard-schema|marked)/)'],
  transform: {
    '^.+\\.[tj]s$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  maxWorkers: 2,
  testTimeout: 20000,
};

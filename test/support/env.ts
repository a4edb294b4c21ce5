// Runs before every test file, before any module reads the configuration: keep test output quiet.
process.env.LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

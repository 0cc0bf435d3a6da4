"""The application: configurations, registries of components, tasks, runner, cache, report store, CLI, benchmark."""

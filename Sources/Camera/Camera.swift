// The Camera component: see docs/architecture.md.

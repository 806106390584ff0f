// The Camera component: see ../../README.md and ARCHITECTURE.md.

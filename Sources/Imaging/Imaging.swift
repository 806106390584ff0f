// The Imaging component: see ../../README.md and ARCHITECTURE.md.

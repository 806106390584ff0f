// The Appliance component: see ../../README.md and ARCHITECTURE.md.

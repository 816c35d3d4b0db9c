// Package docs holds no code: its tests keep README.md true to the repository, so that its
// Layout names every package under pkg/ and cmd/ and no package that is gone, and every
// relative link in it (to a file, to a file's heading, or to one of its own headings) resolves.
package docs

// Package download is Fuel's fuel-download: it fetches the files of a
// standard dataset (mnist, binarized_mnist, cifar10, cifar100, svhn,
// iris, caltech101_silhouettes) into a directory, where fuel convert
// reads them.
//
// Unlike Fuel's downloader it
//
//   - tries each file's addresses in order (Fuel's own first, then the
//     well-known mirrors) when one fails;
//   - resumes an interrupted transfer with an HTTP Range request, both
//     within one run (a dropped connection) and across runs (the partial
//     file ".NAME.part" is kept for the next run);
//   - checks every file that has a published digest (the table in
//     datasets.go says which, and where the digest is published) and
//     rejects a mismatch with an error naming both digests;
//   - moves a file into place only once it is complete and verified
//     (written to a hidden ".NAME.part", fsynced, renamed, directory
//     fsynced), so an interrupted download never leaves a file that looks
//     complete;
//   - shows a progress bar on a terminal, and plain progress lines
//     otherwise.
package download

"""Model layer: files and geometry (motions, .osim import, muscle paths, contact) as symbolic model parts."""

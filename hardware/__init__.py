"""Frame sources: Raspberry Pi camera, webcams, video, URLs, image folders, the simulated table."""

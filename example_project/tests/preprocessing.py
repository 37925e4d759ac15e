"""The reference network's own pre-processing (what the training code does to a camera frame).

``preprocess(frame)``: a 20x24 RGB uint8 frame -> the centre 16x16 crop (rows 2..17, columns
4..19), normalised with the ImageNet mean and std, as float32 CHW. The AIPP file
``aipp/camera_rgb.cfg`` must do exactly this on the device; ``check_preprocessing`` checks it.
"""
import numpy as np

MEAN = np.array([123.675, 116.28, 103.53])
STD = np.array([58.395, 57.12, 57.375])


def preprocess(frame: np.ndarray) -> np.ndarray:
    crop = frame[2:18, 4:20].astype(np.float64)
    return ((crop - MEAN) / STD).transpose(2, 0, 1).astype(np.float32)


def camera_frames(n: int = 4, seed: int = 0) -> np.ndarray:
    """``n`` seeded 20x24 RGB888 frames (N x H x W x 3 uint8), as the camera would send them."""
    return np.random.default_rng(seed).integers(0, 256, (n, 20, 24, 3), dtype=np.uint8)

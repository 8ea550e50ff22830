"""suite"""

"""bot/handlers"""

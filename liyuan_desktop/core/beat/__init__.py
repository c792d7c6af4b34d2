"""beat"""
